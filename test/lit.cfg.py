# lit configuration for mxfp4-jit: IR, ISA and tool-output tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "mxfp4-jit"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mxfp4_obj_root, "test")
config.environment["FILECHECK_OPTS"] = "--enable-var-scope --dump-input=fail"

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.use_default_substitutions()
tool_dirs = [os.path.join(config.mxfp4_obj_root, "bin"), config.llvm_tools_dir]
tools = ["mxfp4-quant", "mxfp4-opt", "mxfp4-dump", "mxfp4-jit-compile", "mxfp4-tune", "mxfp4-bench",
         "mxfp4-amdgpu-sim"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# File system faults for the cache tests (tools/Inputs/faultfs.c), preloaded.
config.substitutions.append(("%faultfs", os.path.join(config.mxfp4_obj_root, "lib", "faultfs.so")))

# ptxas (CUDA toolkit) lets the sm_90a tests also check register use and spills.
import shutil
ptxas = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("ptxas", ptxas))
