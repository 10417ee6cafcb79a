/*
 * Copyright: (c) 2026, commsgw.routing contributors
 * GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
 *
 * LD_PRELOAD fix for SIPp built with wolfSSL (Debian 13's sip-tester 3.7.3), used by the TLS bench
 * (harness.rootfs.sipp_tls_runtime). SIPp attaches each TLS socket with SSL_set_bio() and asks
 * SSL_get_fd() before every write; wolfSSL only knows a descriptor given by SSL_set_fd() and
 * answers -1, so SIPp sends no TLS message at all ("Unable to send TLS message"). This
 * wolfSSL_get_fd() answers with the socket BIO's descriptor instead.
 */
typedef struct WOLFSSL WOLFSSL;
typedef struct WOLFSSL_BIO WOLFSSL_BIO;
extern WOLFSSL_BIO *wolfSSL_SSL_get_rbio(const WOLFSSL *ssl);
extern long wolfSSL_BIO_get_fd(WOLFSSL_BIO *bio, int *fd);

int wolfSSL_get_fd(const WOLFSSL *ssl);

int wolfSSL_get_fd(const WOLFSSL *ssl)
{
    int fd = -1;
    WOLFSSL_BIO *bio = ssl ? wolfSSL_SSL_get_rbio(ssl) : 0;

    if (bio == 0 || wolfSSL_BIO_get_fd(bio, &fd) < 0)
        return -1;
    return fd;
}
