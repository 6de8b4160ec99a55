import random
import urllib.request

import httpx
import requests
from flask import Flask, request, send_file

app = Flask(__name__)


@app.route("/download")
def download():
    return send_file("/srv/files/" + request.args["name"])  # expect: PK401


@app.route("/read")
def read():
    return open(request.args.get("path")).read()  # expect: PK401


def fetch(url):
    requests.get(url)  # expect: B113
    requests.post(url, json={}, timeout=None)  # expect: B113
    requests.put(url, timeout=10)
    httpx.get(url, verify=False)  # expect: B501
    urllib.request.urlopen(url)  # expect: B310


def token():
    return "".join(random.choice("abcdef0123456789") for _ in range(32))  # expect: B311


def pick():
    return random.randint(0, 10)  # expect: B311


HOST = "0.0.0.0"  # expect: B104
app.run(host=HOST, debug=True)  # expect: B201
