// test_api_cxx.cpp - the public headers from C++: they compile, and the names
// they declare link against libparplan as C names (extern "C"); without the
// guards the linker would look for C++-mangled ones and fail.  Prints TAP.
#include <cstdio>
#include <cstring>

#include "parplan/parplan.h"

int main()
{
    ppl_error err;
    std::memset(&err, 0, sizeof err);
    ppl_pins *pins = ppl_pins_new();
    bool ok = pins && std::strcmp(ppl_version(), PPL_VERSION_STRING) == 0 &&
              ppl_pins_set(pins, "tp", "8", &err) == PPL_OK &&
              ppl_pins_set(pins, "tp", "eight", &err) == PPL_EUSAGE;
    char line[PPL_ERROR_MSG_MAX + PPL_ERROR_KEY_MAX + 8];
    ppl_error_format(&err, line, sizeof line);
    ppl_pins_free(pins);
    std::printf("1..1\n%s 1 - C++ includes parplan.h and links libparplan (%s)\n",
                ok ? "ok" : "not ok", line);
    return ok ? 0 : 1;
}
