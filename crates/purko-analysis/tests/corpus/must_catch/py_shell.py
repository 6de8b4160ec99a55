"""Processes started with and without a shell."""
import os
import os as system_module
import subprocess  # expect: B404
from os import popen as open_pipe
from subprocess import Popen as start

command = input()
os.system("ls -l " + command)  # expect: B605
system_module.system(command)  # expect: B605
os.popen("cat /etc/passwd")  # expect: B605
open_pipe(command)  # expect: B605
subprocess.Popen("/bin/ls " + command, shell=True)  # expect: B602
subprocess.call(command, shell=1)  # expect: B602
subprocess.check_output(["/bin/ls", "-l"])  # expect: B603
subprocess.run(["ls", "-la"])  # expect: B603 B607
subprocess.check_call("/bin/ls -l", shell=True)  # expect: B602
start("ls " + command, shell=True)  # expect: B602
subprocess.getoutput("uname -a")  # expect: B605
os.execl("/bin/ls", "ls")  # expect: B606
os.execvp("ls", ["ls"])  # expect: B606 B607
os.spawnlp(os.P_WAIT, "ls", "ls")  # expect: B606
os.posix_spawn("/bin/ls", ["ls"], os.environ)  # expect: B606
subprocess.Popen("chmod 777 *", shell=True)  # expect: B602 B609


def deploy(host, run_shell):
    run_shell("tar czf out.tgz *", shell=True)  # expect: B604
