// An unknown or non-AMD chip is an error even on a module with no kernel:
// the pipeline must not look like it worked.
// RUN: not mxfp4-opt %s --mxfp4-to-rocdl=chip=gfx942 2>&1 | FileCheck %s --check-prefix=GFX942
// GFX942: error: mxtile-to-amdgpu: unsupported chip 'gfx942'; expected gfx950 or gfx1250
// RUN: not mxfp4-opt %s --mxfp4-to-rocdl=chip=sm_90a 2>&1 | FileCheck %s --check-prefix=SM90
// SM90: error: mxtile-to-amdgpu: unsupported chip 'sm_90a'
// RUN: mxfp4-opt %s --mxfp4-to-rocdl=chip=gfx1250 | FileCheck %s --check-prefix=OK
// OK: module
module {
}
