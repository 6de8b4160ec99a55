import ftplib  # expect: B402
import socket
import telnetlib  # expect: B401

session = telnetlib.Telnet("router.local")  # expect: B312
ftp = ftplib.FTP("ftp.example.org")  # expect: B321
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.bind(("0.0.0.0", 8080))  # expect: B104
