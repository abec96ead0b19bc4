"""Signs requests with botocore's own S3 signers, for SigV4ComparisonTests.

Reads a JSON list of cases (its one argument); for each, prints botocore's answer: the Authorization
header (S3SigV4Auth, header signing) or the presigned URL (S3SigV4QueryAuth). The clock is
fixed to the case's date, as botocore's own tests fix it.
"""
import datetime
import json
import sys
from types import SimpleNamespace
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode


def sign(case):
    credentials = Credentials(case["accessKeyID"], case["secretAccessKey"], case.get("sessionToken"))
    date = datetime.datetime.fromtimestamp(case["date"], tz=datetime.timezone.utc)
    # The key encoded as botocore's S3 serializer encodes it; the query as parameters.
    url = case["endpoint"] + percent_encode(case["path"], safe="/~")
    request = AWSRequest(method=case["method"], url=url, headers=case.get("headers", {}),
                         data=case.get("body", "").encode(), params=case.get("query", {}))
    with mock.patch("botocore.auth.get_current_datetime", return_value=date.replace(tzinfo=None)):
        if case.get("expires"):
            botocore.auth.S3SigV4QueryAuth(credentials, "s3", case["region"], expires=case["expires"]).add_auth(request)
            return request.url
        if case.get("unsignedPayload"):
            request.context["client_config"] = SimpleNamespace(s3={"payload_signing_enabled": False})
        botocore.auth.S3SigV4Auth(credentials, "s3", case["region"]).add_auth(request)
        return request.headers["Authorization"]


print(json.dumps([sign(case) for case in json.loads(sys.argv[1])]))
