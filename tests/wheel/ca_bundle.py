"""Which CA bundle the wheel's S3 client trusts in this root, by the files present: the wheel
vendors Debian's libcurl, whose compiled-in bundle path other distributions lack, so gpufeed
looks for the system's bundle itself (Debian and Ubuntu, Fedora and RHEL, openSUSE, Alpine).

    ca_bundle.py PEM

First checks the root's own bundle is found. Then for each system path in turn: the bundles at
the paths before it are set aside (renamed, put back after), PEM is put there unless the root
has a file there already (its folders made and removed again), and gpufeed must pick that path,
and AWS_CA_BUNDLE over it. Exits 1 naming what was picked instead.
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
    for index, path in enumerate(SYSTEM):
        aside = [p for p in SYSTEM[:index] if os.path.lexists(p)]
        made = []
        placed = not os.path.lexists(path)
        try:
            for p in aside:
                os.rename(p, p + ".gpufeed-aside")
            if placed:
                folder = os.path.dirname(path)
                while not os.path.isdir(folder):
                    made.append(folder)
                    folder = os.path.dirname(folder)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                shutil.copyfile(pem, path)
            got = picked()
            if got != path:
                sys.exit(f"ca_bundle.py: with {path} the first bundle present the wheel picked "
                         f"{got!r}")
            got = picked({"AWS_CA_BUNDLE": pem})
            if got != pem:
                sys.exit(f"ca_bundle.py: AWS_CA_BUNDLE={pem} lost to {got!r}")
            checked.append(path)
        finally:
            if placed and os.path.lexists(path):
                os.remove(path)
            for folder in made:
                os.rmdir(folder)
            for p in aside:
                os.rename(p + ".gpufeed-aside", p)
    found = [f"found at {', '.join(checked)}"] if checked else []
    found += [f"the root's own: {present[0]}"] if present else []
    print("CA bundle: " + ("; ".join(found) or "none in this root, none checked"))


if __name__ == "__main__":
    main()
