/// A self-signed certificate for 127.0.0.1 and localhost (EC P-256, valid until 2126), made with
/// `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 36500 -nodes
/// -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"`. For tests only:
/// a client that verifies certificates must refuse it.
enum TestCertificate {
    static let certificatePEM = """
-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUMVE+0CksV3/UnLhXibacFQjDHaQwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMjA2NTk1NloYDzIxMjYxMDI5
MDY1OTU2WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAST97LtxfCSStnFBoabTZ7cpyWi1Jsf/mtl0OiK4xFctWRMaeKhVefZ
la4ld5X/YML/7BS49gbcvczLRWgHslRto28wbTAdBgNVHQ4EFgQUv3hZ7gP7CRWr
IkH1nfKN+KOyiDMwHwYDVR0jBBgwFoAUv3hZ7gP7CRWrIkH1nfKN+KOyiDMwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDSQAwRgIhAJK5sOSPWMQPG7smrvLCqNPTvEq1uxP6haeUy7WKlT+8AiEA
guYUn52SnfNN8CuKn8ziLODk9akj+mgKgxgACZPfT70=
-----END CERTIFICATE-----
"""

    static let privateKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg240HgHlW0g2iCusE
YYD9LH5j4I/buHTeoN7eJLKaN9ihRANCAAST97LtxfCSStnFBoabTZ7cpyWi1Jsf
/mtl0OiK4xFctWRMaeKhVefZla4ld5X/YML/7BS49gbcvczLRWgHslRt
-----END PRIVATE KEY-----
"""
}
