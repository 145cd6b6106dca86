# Every dependency comes from Debian 12's packages (see .ci/install-deps).
find_package(Threads REQUIRED)
find_package(TBB 2021 REQUIRED COMPONENTS tbb)
# A wheel carries its own HDF5 into processes that load others (h5py's, netCDF4's, PyTables'):
# GPUFEED_STATIC_HDF5 links a static, position-independent HDF5 (.ci/build-hdf5-static builds
# it from Debian's source) with every symbol of the static archives hidden, so that gpufeed's
# copy can neither interpose another copy's symbols nor be interposed by them, whatever the
# load order or dlopen flags.
option(GPUFEED_STATIC_HDF5 "Link a static HDF5 (GPUFEED_HDF5_ROOT) with its symbols hidden" OFF)
set(GPUFEED_HDF5_ROOT "" CACHE PATH "Install prefix of the static HDF5 (.ci/build-hdf5-static)")
if(NOT GPUFEED_STATIC_HDF5)
  find_package(HDF5 REQUIRED COMPONENTS C)
endif()
find_package(CUDAToolkit REQUIRED)
# nvJPEG's header only: the library is loaded at run time (pipeline/src/cuda/nvjpeg_api.cpp).
# The CUDA toolkit's, else PyPI's nvidia-nvjpeg (nvidia/cu<MAJOR>/include) in the Python the
# build uses, in build/venv (.ci/python-env installs it) or in a wheel's build environment.
# Without it the loader builds without decode=gpu, which then says why in one line.
if(NOT GPUFEED_NVJPEG_INCLUDE_DIR)
  set(nvjpeg_hints ${CUDAToolkit_INCLUDE_DIRS})
  foreach(python IN ITEMS "${Python_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/build/venv/bin/python"
                          "python3")
    if(NOT python)
      continue()
    endif()
    execute_process(
      COMMAND ${python} -c "import nvidia, os; print(';'.join(os.path.join(p, 'cu${CUDAToolkit_VERSION_MAJOR}', 'include') for p in nvidia.__path__))"
      OUTPUT_VARIABLE nvidia_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
      RESULT_VARIABLE nvidia_status)
    if(nvidia_status EQUAL 0)
      list(APPEND nvjpeg_hints ${nvidia_include})
    endif()
  endforeach()
  find_path(GPUFEED_NVJPEG_INCLUDE_DIR nvjpeg.h HINTS ${nvjpeg_hints} NO_DEFAULT_PATH)
endif()
if(GPUFEED_NVJPEG_INCLUDE_DIR)
  message(STATUS "gpufeed: nvJPEG's header in ${GPUFEED_NVJPEG_INCLUDE_DIR}: decode=gpu built")
else()
  message(STATUS "gpufeed: no nvjpeg.h (CUDA toolkit or PyPI's nvidia-nvjpeg): decode=gpu not built")
endif()
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
pkg_check_modules(LIBJPEG REQUIRED IMPORTED_TARGET libjpeg)
pkg_check_modules(SPNG REQUIRED IMPORTED_TARGET spng)
pkg_check_modules(WEBP REQUIRED IMPORTED_TARGET libwebp libwebpdemux)
find_package(CURL 7.75 REQUIRED)  # S3 object storage: AWS SigV4 signing (CURLOPT_AWS_SIGV4)
find_package(EXPAT REQUIRED)      # S3's XML replies
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)

# HDF5's FindHDF5 result as one imported target.
if(NOT TARGET gpufeed_hdf5 AND GPUFEED_STATIC_HDF5)
  find_library(GPUFEED_HDF5_ARCHIVE NAMES libhdf5.a PATHS ${GPUFEED_HDF5_ROOT}/lib NO_DEFAULT_PATH)
  if(NOT GPUFEED_HDF5_ARCHIVE OR NOT EXISTS ${GPUFEED_HDF5_ROOT}/include/hdf5.h)
    message(FATAL_ERROR "GPUFEED_STATIC_HDF5: no static HDF5 in GPUFEED_HDF5_ROOT="
                        "'${GPUFEED_HDF5_ROOT}'; build one with .ci/build-hdf5-static and pass "
                        "the prefix it prints")
  endif()
  find_package(ZLIB REQUIRED)
  add_library(gpufeed_hdf5 INTERFACE)
  target_include_directories(gpufeed_hdf5 SYSTEM INTERFACE ${GPUFEED_HDF5_ROOT}/include)
  target_link_libraries(gpufeed_hdf5 INTERFACE ${GPUFEED_HDF5_ARCHIVE} ZLIB::ZLIB Threads::Threads
                                               ${CMAKE_DL_LIBS} m)
  target_link_options(gpufeed_hdf5 INTERFACE "LINKER:--exclude-libs,ALL")
elseif(NOT TARGET gpufeed_hdf5)
  add_library(gpufeed_hdf5 INTERFACE)
  target_include_directories(gpufeed_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_link_libraries(gpufeed_hdf5 INTERFACE ${HDF5_C_LIBRARIES})
  target_compile_definitions(gpufeed_hdf5 INTERFACE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS})
endif()

# A g++ without a shared libstdc++ beside it links a copy of libstdc++ into every program and
# module. Such a copy cannot share a process with PyTorch's LibTorch, which exports a part of
# libstdc++ of its own (std::filesystem): calls bind across the copies and crash.
set(GPUFEED_STATIC_LIBSTDCXX OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE gpufeed_libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${gpufeed_libstdcxx}")
    set(GPUFEED_STATIC_LIBSTDCXX ON)
  endif()
endif()
