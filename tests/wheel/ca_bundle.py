"""Which CA bundle the wheel's S3 client trusts in this root, by the files present: the wheel
vendors Debian's libcurl, whose compiled-in bundle path other distributions lack, so gpufeed
looks for the system's bundle itself (Debian and Ubuntu, Fedora and RHEL, openSUSE, Alpine).

    ca_bundle.py PEM

For each system path this root does not have, puts PEM there (its folders made and removed
again), checks gpufeed picks it, and takes it away; AWS_CA_BUNDLE wins over all of them. Paths
this root has already are checked as found. Exits 1 naming what was picked instead.
"""
import os
import shutil
import subprocess
import sys

SYSTEM = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
          "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem",
          "/etc/ssl/cert.pem"]


def picked(env=None):
    """The bundle a fresh process picks (the choice is made when settings are read)."""
    code = "import gpufeed._native as n; print(n.s3_settings()['ca_bundle'])"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, check=True)
    return run.stdout.strip()


def main():
    pem = sys.argv[1]
    for name in ("AWS_CA_BUNDLE", "SSL_CERT_FILE"):
        os.environ.pop(name, None)
    present = [p for p in SYSTEM if os.path.exists(p)]
    if present:
        assert picked() == present[0], (picked(), present)
    checked = []
    for path in SYSTEM:
        if any(os.path.exists(p) for p in SYSTEM[: SYSTEM.index(path) + 1]):
            continue  # this path, or one before it, is the root's own: nothing to put there
        made = []
        folder = os.path.dirname(path)
        while not os.path.isdir(folder):
            made.append(folder)
            folder = os.path.dirname(folder)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copyfile(pem, path)
            got = picked()
            if got != path:
                sys.exit(f"ca_bundle.py: with only {path} present the wheel picked {got!r}")
            got = picked({"AWS_CA_BUNDLE": pem})
            if got != pem:
                sys.exit(f"ca_bundle.py: AWS_CA_BUNDLE={pem} lost to {got!r}")
            checked.append(path)
        finally:
            os.remove(path)
            for folder in made:
                os.rmdir(folder)
    found = [f"put at and found: {', '.join(checked)}"] if checked else []
    found += [f"the root's own: {present[0]}"] if present else []
    print("CA bundle: " + ("; ".join(found) or "none in this root, none checked"))


if __name__ == "__main__":
    main()
