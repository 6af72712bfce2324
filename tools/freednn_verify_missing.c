/* freednn verify when the tools were built without OpenSSL's libcrypto. */
#include <stdio.h>
#include "freednn_tools.h"

int fdt_verify_main(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "freednn verify: this freednn was built without OpenSSL libcrypto, so it cannot compute SHA-256.\n"
                    "Install libssl-dev (Debian/Ubuntu) or openssl-devel (Fedora/RHEL) and rebuild FreeDNN,\n"
                    "or check by hand: cd PREFIX && sha256sum -c share/freednn/SHA256SUMS\n");
    return 3;
}
