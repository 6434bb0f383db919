// A stand-in for a PyPI extension of torch (torchvision's _C.so): it needs libtorch_cpu by name and
// its RPATH names a folder of the machine it was built on, so it works only where torch is already
// loaded. For PythonDump.AnExtensionRelyingOnTheLoadedLibTorchIsDumped (built with the tests).
extern "C" int acccheck_test_extension_answer() { return 42; }
