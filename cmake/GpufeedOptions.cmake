# Flags shared by every gpufeed target, carried by one INTERFACE target so that
# nothing leaks into consumers of the installed package.
add_library(gpufeed_build_flags INTERFACE)
target_compile_options(gpufeed_build_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
# GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string at -O3 (GCC PR105329).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(gpufeed_build_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(GPUFEED_WERROR)
  target_compile_options(gpufeed_build_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
if(GPUFEED_SANITIZE)
  target_compile_options(gpufeed_build_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${GPUFEED_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  # UBSan's vptr check rejects oneTBB's own flow-graph task casts (its tasks live in libtbb's
  # small-object pool, whose vtables UBSan cannot match); every other UBSan check stays on.
  if(GPUFEED_SANITIZE MATCHES "undefined")
    target_compile_options(gpufeed_build_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize=vptr>)
  endif()
  # GCC 12's flow-based warnings misfire once the sanitizers' instrumentation is in:
  # -Wmaybe-uninitialized inside libstdc++'s std::regex and std::function (GCC PR105562), and at
  # -O1 (the sanitizer presets) -Wstringop-overflow, -Wstringop-overread and -Warray-bounds on
  # std::vector::resize (a bound "between 2^63 and 2^64"). The release build keeps them all.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(gpufeed_build_flags INTERFACE
      $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized -Wno-stringop-overflow
                                -Wno-stringop-overread -Wno-array-bounds>)
  endif()
  target_link_options(gpufeed_build_flags INTERFACE -fsanitize=${GPUFEED_SANITIZE})
endif()
if(GPUFEED_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GPUFEED_FUZZ needs clang (libFuzzer): use the fuzz preset")
  endif()
  # Coverage for libFuzzer in every gpufeed library; the fuzz targets link -fsanitize=fuzzer.
  target_compile_options(gpufeed_build_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()

# gpufeed_add_module(NAME [STATIC] sources...): a library module of the project: the target
# gpufeed_NAME and its alias gpufeed::NAME (exported as NAME), public headers under
# NAME/include (the install's include root), src/ for its private headers, C++20 for whoever
# links it and the project's warning flags for its own sources.
function(gpufeed_add_module name)
  add_library(gpufeed_${name} ${ARGN})
  add_library(gpufeed::${name} ALIAS gpufeed_${name})
  set_target_properties(gpufeed_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(gpufeed_${name}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(gpufeed_${name} PRIVATE $<BUILD_INTERFACE:gpufeed_build_flags>)
  target_compile_features(gpufeed_${name} PUBLIC cxx_std_20)
endfunction()
