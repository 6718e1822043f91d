# Small helpers so that a folder's CMakeLists.txt stays a few lines and adding a file needs no edit.

# zinfer_library(NAME GLOBS <patterns...> LIBS <targets...>): a static library of the matching files.
function(zinfer_library name)
  cmake_parse_arguments(ARG "" "" "GLOBS;LIBS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${ARG_GLOBS})
  if(NOT srcs)
    # A folder whose sources are not written yet still configures (an empty library).
    set(empty ${CMAKE_CURRENT_BINARY_DIR}/${name}_empty.cpp)
    file(WRITE ${empty} "")
    set(srcs ${empty})
  endif()
  add_library(${name} STATIC ${srcs})
  target_link_libraries(${name} PUBLIC ${ARG_LIBS})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
endfunction()

# zinfer_test(NAME LIBS <targets...> [GPU] [SOURCES files...]): one gtest binary of the *.cpp files
# in the current folder (or SOURCES). GPU tests carry the ctest label `gpu` and skip themselves
# ("skipped: no CUDA device") where no device is present.
function(zinfer_test name)
  cmake_parse_arguments(ARG "GPU" "TIMEOUT" "LIBS;SOURCES" ${ARGN})
  if(ARG_SOURCES)
    set(srcs ${ARG_SOURCES})
  else()
    file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/*.cu)
  endif()
  add_executable(${name} ${srcs})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    ZINFER_SOURCE_DIR="${CMAKE_SOURCE_DIR}" ZINFER_BINARY_DIR="${CMAKE_BINARY_DIR}")
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(ARG_GPU)
    set(labels "gpu")
  else()
    set(labels "unit")
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${labels}" TIMEOUT ${ARG_TIMEOUT}
               SKIP_REGULAR_EXPRESSION "skipped: no CUDA device")
endfunction()
