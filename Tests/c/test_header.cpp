// The header must compile as C++ too (extern "C" guards, no C-only syntax),
// and its names must link from C++.
#include "tureen.h"
#include <cstdio>

int main()
{
    tureen_store *s = nullptr;
    int rc = tureen_store_open(nullptr, "{}", &s);
    bool ok = rc == TUREEN_E_MISUSE && s == nullptr && tureen_version_number() == TUREEN_VERSION_NUMBER;
    std::printf("test_header.cpp: %d checks passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    return ok ? 0 : 1;
}
