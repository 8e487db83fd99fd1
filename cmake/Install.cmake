# `cmake --install`: the API headers, the shared library of this build
# (libmxfp4jit.so from an MXFP4_STATIC_LLVM build, libmxfp4jit-rt.so from
# an MXFP4_RUNTIME_ONLY one), the tools, a CMake package and a pkg-config
# file. Both builds may install into one prefix: the package then has both
# targets, mxfp4jit::mxfp4jit and mxfp4jit::runtime.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(MXFP4_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/mxfp4jit)

# The API's headers: everything but the compiler's internals, which need
# LLVM/MLIR headers an engine does not have.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mxfp4/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mxfp4
  FILES_MATCHING PATTERN "*.h"
  PATTERN "Conversion" EXCLUDE PATTERN "DSL" EXCLUDE PATTERN "Dialect" EXCLUDE
  PATTERN "Target" EXCLUDE PATTERN "LLVMError.h" EXCLUDE
  REGEX "/Kernels/(GemmA4W4|MoeElementwise|MoeSort)\\.h$" EXCLUDE)

# mxfp4_install_library(target export-name pc-name description)
function(mxfp4_install_library target export pc description)
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${target} EXPORT ${export} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT ${export} NAMESPACE mxfp4jit:: DESTINATION ${MXFP4_INSTALL_CMAKEDIR})
  # Relative to the .pc file, so a prefix given to `cmake --install` works.
  file(RELATIVE_PATH _up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  set(MXFP4_PC_PREFIX "\${pcfiledir}/${_up}")
  set(MXFP4_PC_NAME ${pc})
  set(MXFP4_PC_LIB ${target})
  set(MXFP4_PC_DESCRIPTION "${description}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/mxfp4jit.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

if(MXFP4_RUNTIME_ONLY)
  set_target_properties(mxfp4jit-rt PROPERTIES EXPORT_NAME runtime)
  mxfp4_install_library(mxfp4jit-rt mxfp4jitRuntimeTargets mxfp4jit-rt
                        "mxfp4-jit runtime: MXFP4 kernels served from an AOT cache")
elseif(MXFP4_STATIC_LLVM)
  mxfp4_install_library(mxfp4jit mxfp4jitTargets mxfp4jit
                        "mxfp4-jit: JIT compiler and runtime for MXFP4 GEMM and MoE kernels")
endif()
if(NOT MXFP4_RUNTIME_ONLY)
  # OPTIONAL: `cmake --install` of a tree where only some tools were built.
  install(TARGETS mxfp4-dump mxfp4-jit-compile mxfp4-opt mxfp4-quant mxfp4-tune mxfp4-bench
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} OPTIONAL)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mxfp4jitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mxfp4jitConfig.cmake INSTALL_DESTINATION ${MXFP4_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mxfp4jitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mxfp4jitConfig.cmake
              ${PROJECT_BINARY_DIR}/mxfp4jitConfigVersion.cmake
        DESTINATION ${MXFP4_INSTALL_CMAKEDIR})
