# Strict warnings on our own targets only; third-party headers come in as SYSTEM.
add_library(pp_warnings INTERFACE)
target_compile_options(pp_warnings INTERFACE -Wall -Wextra -Werror -Wno-missing-field-initializers)

# clang 16 implements everything libstdc++ 12's <expected> needs but still reports
# __cpp_concepts as 201907, which hides std::expected; announce the level it has.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_compile_options(-Wno-builtin-macro-redefined -Wno-macro-redefined -D__cpp_concepts=202002L)
endif()

function(pp_library name)
  add_library(${name} STATIC ${ARGN})
  target_link_libraries(${name} PRIVATE pp_warnings)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()
