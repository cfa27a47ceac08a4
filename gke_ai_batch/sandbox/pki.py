"""The sandbox's certificates, made with openssl: one CA that signs the API server's serving certificate, the admin's
client certificate (group system:masters), the webhooks' serving certificate (Kueue's and JobSet's, reached by URL on
127.0.0.1), and the service-account signing key. They live in <sandbox>/pki and last 30 days."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .errors import SandboxError

DAYS = "30"
LOOPBACK_NAMES = "subjectAltName=IP:127.0.0.1,DNS:localhost"


def _openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SandboxError(f"openssl {args[0]} failed: {done.stderr.strip()}")


def _signed(pki: Path, name: str, subject: str, usage: str, alt_names: str | None) -> None:
    """<name>.crt and <name>.key, signed by the CA."""
    _openssl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", subject, cwd=pki)
    ext = pki / f"{name}.ext"
    ext.write_text(f"extendedKeyUsage={usage}\n" + (f"{alt_names}\n" if alt_names else ""))
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", f"{name}.crt", "-days", DAYS, "-extfile", ext.name, cwd=pki)


def make_pki(root: Path) -> Path:
    """A fresh <root>/pki; returns its path."""
    if shutil.which("openssl") is None:
        raise SandboxError("the sandbox makes its certificates with openssl, which is not on PATH: apt-get install "
                           "openssl")
    pki = root / "pki"
    shutil.rmtree(pki, ignore_errors=True)
    pki.mkdir(parents=True)
    _openssl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", "ca.key", "-out", "ca.crt",
             "-days", DAYS, "-subj", "/CN=gke-ai-batch-sandbox-ca", cwd=pki)
    _signed(pki, "apiserver", "/CN=kube-apiserver", "serverAuth", LOOPBACK_NAMES)
    _signed(pki, "admin", "/O=system:masters/CN=sandbox-admin", "clientAuth", None)
    _signed(pki, "webhook", "/CN=sandbox-webhooks", "serverAuth", LOOPBACK_NAMES)
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)
    return pki
