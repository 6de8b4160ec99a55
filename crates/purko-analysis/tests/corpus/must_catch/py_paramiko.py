import paramiko

client = paramiko.SSHClient()
client.set_missing_host_key_policy(paramiko.AutoAddPolicy())  # expect: B507
client.connect("example.org", username="deploy")
stdin, stdout, stderr = client.exec_command("ls " + input())  # expect: B601
client.set_missing_host_key_policy(paramiko.WarningPolicy)  # expect: B507
