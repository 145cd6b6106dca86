# Every dependency comes from Debian 12's packages (see .ci/install-deps).
find_package(Threads REQUIRED)
find_package(TBB 2021 REQUIRED COMPONENTS tbb)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(CUDAToolkit REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
pkg_check_modules(LIBJPEG REQUIRED IMPORTED_TARGET libjpeg)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)

# HDF5's FindHDF5 result as one imported target.
if(NOT TARGET gpufeed_hdf5)
  add_library(gpufeed_hdf5 INTERFACE)
  target_include_directories(gpufeed_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_link_libraries(gpufeed_hdf5 INTERFACE ${HDF5_C_LIBRARIES})
  target_compile_definitions(gpufeed_hdf5 INTERFACE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS})
endif()
