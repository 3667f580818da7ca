"""Certificates for one test run, made with the openssl command line. Stdlib only.

    pki = TestPki(tmpdir)
    pki.ca_file                      # the CA the broker and client certs chain to
    pki.other_ca_file                # an unrelated CA (a "wrong CA" client)
    pki.leaf("broker", cn="localhost", san="DNS:localhost,IP:127.0.0.1")
    pki.leaf("old", ..., expired=True)   # valid 2020-01-01 .. 2020-01-02
    -> Leaf(cert, key, keystore)         # keystore: key + chain in one PEM file (Kafka's ssl.keystore.type=PEM)

Leaves are signed with `openssl ca`, which (unlike `openssl x509 -req` in
OpenSSL 3.0) takes explicit start and end dates, so an expired certificate is
expired from the start and no test waits for time to pass. Keys are RSA 2048,
unencrypted PKCS#8: what Java's PEM key store reads without a password.
"""

import collections
import os
import subprocess

Leaf = collections.namedtuple("Leaf", "cert key keystore")

_CA_CONFIG = """
[ca]
default_ca = test_ca
[test_ca]
dir = {dir}
database = {dir}/index.txt
new_certs_dir = {dir}/issued
certificate = {cert}
private_key = {key}
serial = {dir}/serial
default_md = sha256
policy = any_name
unique_subject = no
copy_extensions = none
[any_name]
commonName = supplied
[leaf]
basicConstraints = CA:FALSE
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = ${{ENV::PP_TEST_SAN}}
"""


def _openssl(*args, env=None):
    r = subprocess.run(["openssl"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (args[0], r.stdout.decode(errors="replace")))


class TestPki:
    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.ca_file, self._ca_key, self._ca_dir = self._make_ca("ca", "produce-proxy test CA")
        self.other_ca_file, _, _ = self._make_ca("other-ca", "an unrelated CA")

    def _make_ca(self, stem, cn):
        cert = os.path.join(self.dir, stem + ".crt")
        key = os.path.join(self.dir, stem + ".key")
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                 "-subj", "/CN=" + cn, "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        ca_dir = os.path.join(self.dir, stem + "-db")
        os.makedirs(os.path.join(ca_dir, "issued"), exist_ok=True)
        open(os.path.join(ca_dir, "index.txt"), "w").close()
        with open(os.path.join(ca_dir, "serial"), "w") as f:
            f.write("1000\n")
        with open(os.path.join(ca_dir, "ca.cnf"), "w") as f:
            f.write(_CA_CONFIG.format(dir=ca_dir, cert=cert, key=key))
        return cert, key, ca_dir

    def leaf(self, stem, cn, san, expired=False):
        cert = os.path.join(self.dir, stem + ".crt")
        key = os.path.join(self.dir, stem + ".key")
        csr = os.path.join(self.dir, stem + ".csr")
        _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + cn)
        dates = ["-startdate", "20200101000000Z", "-enddate", "20200102000000Z"] if expired else ["-days", "2"]
        env = dict(os.environ, PP_TEST_SAN=san)
        _openssl("ca", "-batch", "-notext", "-config", os.path.join(self._ca_dir, "ca.cnf"), "-extensions", "leaf",
                 "-in", csr, "-out", cert, *dates, env=env)
        keystore = os.path.join(self.dir, stem + ".keystore.pem")
        with open(keystore, "w") as out:
            for part in (key, cert, self.ca_file):
                with open(part) as f:
                    out.write(f.read())
        return Leaf(cert, key, keystore)
