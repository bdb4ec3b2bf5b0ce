"""Signs one request with botocore's SigV4 signer, as the reference for discfg's own signer.

Reads a JSON object on stdin:
  {"method", "url", "headers": [[name, value], ...], "body", "access_key", "secret_key",
   "session_token" (optional), "region", "service", "timestamp" ("YYYYMMDDTHHMMSSZ")}
Prints a JSON object with "authorization", "canonical_request", "string_to_sign" and "headers".
Exit status 3 means botocore is not importable.
"""
import datetime
import json
import sys

try:
    import botocore
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
except ImportError as exc:  # reported by the Swift test as a failure with an install hint
    sys.stderr.write("%s\n" % exc)
    sys.exit(3)


def main():
    spec = json.load(sys.stdin)
    fixed = datetime.datetime.strptime(spec["timestamp"], "%Y%m%dT%H%M%SZ")
    # botocore reads the clock through this module-level helper; pin it to the test's instant.
    botocore.auth.get_current_datetime = lambda *args, **kwargs: fixed

    credentials = botocore.credentials.Credentials(
        spec["access_key"], spec["secret_key"], spec.get("session_token")
    )
    request = botocore.awsrequest.AWSRequest(
        method=spec["method"],
        url=spec["url"],
        headers={name: value for name, value in spec["headers"]},
        data=spec["body"].encode("utf-8"),
    )
    # S3 signs its path as sent (no normalization) and the payload hash in a header.
    signer_class = botocore.auth.S3SigV4Auth if spec["service"] == "s3" else botocore.auth.SigV4Auth
    signer = signer_class(credentials, spec["service"], spec["region"])
    signer.add_auth(request)

    # The intermediate strings help diagnose a mismatch; recompute them on the signed request
    # with the Authorization header removed, exactly as botocore saw it while signing.
    del request.headers["Authorization"]
    canonical_request = signer.canonical_request(request)
    string_to_sign = signer.string_to_sign(request, canonical_request)
    signer.add_auth(request)

    json.dump(
        {
            "botocore_version": botocore.__version__,
            "authorization": request.headers["Authorization"],
            "canonical_request": canonical_request,
            "string_to_sign": string_to_sign,
            "headers": {k: v for k, v in request.headers.items()},
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
