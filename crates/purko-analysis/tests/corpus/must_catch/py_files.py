import os
import shutil
import stat
import tarfile
import tempfile
from pathlib import Path

os.chmod("/etc/app.conf", 0o777)  # expect: B103
os.chmod("/etc/app.conf", 0o775)  # expect: B103
os.chmod("/etc/app.conf", stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO)  # expect: B103
os.chmod("/etc/app.conf", 0o600)
Path("run.sh").chmod(0o777)  # expect: B103
name = tempfile.mktemp()  # expect: B306
with open("/tmp/app.lock", "w") as lock:  # expect: B108
    lock.write("1")
log_dir = "/var/tmp/app"  # expect: B108
archive = tarfile.open("upload.tar.gz")
archive.extractall("/srv/data")  # expect: B202
archive.extractall("/srv/data", filter="data")
archive.extract("member", "/srv/data")  # expect: B202
shutil.unpack_archive("upload.tar", "/srv/data")  # expect: PK501
