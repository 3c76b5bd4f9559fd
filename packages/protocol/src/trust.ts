/**
 * Variables that name the certificate authorities a client trusts (a company's TLS-inspecting
 * proxy, a private registry): paths to public certificates. L1 keeps them in the server's
 * environment and L3 lets the server read the files they name, so that a server a policy lets
 * reach a host over TLS can verify it.
 */
export const TRUST_VARIABLES: readonly string[] = [
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  "PIP_CERT",
  "AWS_CA_BUNDLE",
];
