include(CMakePackageConfigHelpers)

install(TARGETS gpufeed_base gpufeed_storage gpufeed_formats gpufeed_pipeline gpufeed_profiler
                gpufeed_diagnosis gpufeed_hdf5
        EXPORT gpufeedTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(module base storage formats pipeline profiler diagnosis)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${module}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(EXPORT gpufeedTargets NAMESPACE gpufeed:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpufeed)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpufeedConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpufeedConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpufeed)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpufeedConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpufeedConfig.cmake ${PROJECT_BINARY_DIR}/gpufeedConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpufeed)

# The optional LibTorch adapter in an export set of its own: gpufeedConfig.cmake loads it for
# the `torch` component (or when the consumer has found LibTorch already).
if(TARGET gpufeed_torch)
  install(TARGETS gpufeed_torch
          EXPORT gpufeedTorchTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT gpufeedTorchTargets NAMESPACE gpufeed::
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpufeed)
endif()
