import hashlib
import ssl
from hashlib import sha1 as fingerprint

import requests
from Crypto.Cipher import DES  # expect: B413
from Crypto.Hash import MD5 as CryptoMD5
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import dsa, rsa
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

digest = hashlib.md5(b"password").hexdigest()  # expect: B324
digest = hashlib.sha1(b"data").hexdigest()  # expect: B324
digest = fingerprint(b"data")  # expect: B324
digest = hashlib.new("md5", b"data")  # expect: B324
ok = hashlib.new("sha256", b"data")
ok = hashlib.md5(b"cache key", usedforsecurity=False)
h = CryptoMD5.new()  # expect: B303
h = hashes.Hash(hashes.SHA1())  # expect: B303
cipher = DES.new(b"8bytekey")  # expect: B304
cipher = Cipher(algorithms.TripleDES(b"k" * 24), modes.ECB())  # expect: B304 B305
cipher = Cipher(algorithms.AES(b"k" * 32), modes.ECB())  # expect: B305
key = rsa.generate_private_key(public_exponent=65537, key_size=1024)  # expect: B505
key = dsa.generate_private_key(key_size=512)  # expect: B505

context = ssl._create_unverified_context()  # expect: B323
tls = ssl.wrap_socket(sock, ssl_version=ssl.PROTOCOL_SSLv3)  # expect: B502
tls = ssl.wrap_socket(sock)  # expect: B504
context = ssl.create_default_context()
context.check_hostname = False  # expect: PK601
context.verify_mode = ssl.CERT_NONE  # expect: PK602
response = requests.get("https://example.org", verify=False, timeout=5)  # expect: B501
response = requests.post("https://example.org", data={}, verify=False)  # expect: B113 B501


def connect(version=ssl.PROTOCOL_TLSv1):  # expect: B503
    return version
