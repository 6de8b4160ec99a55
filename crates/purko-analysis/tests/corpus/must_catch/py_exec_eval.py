"""Code run from strings, directly and through aliases."""
import builtins
import importlib
import importlib as il
from builtins import eval as evaluate

user_input = input("expression: ")
result = eval(user_input)  # expect: B307
exec("print('hello')")  # expect: B102
code = compile(user_input, "<input>", "exec")  # expect: PK201
evaluate("1 + 1")  # expect: B307
builtins.exec(user_input)  # expect: B102
getattr(builtins, "eval")(user_input)  # expect: B307
__builtins__.eval(user_input)  # expect: B307
run = exec
run(user_input)  # expect: B102
module = __import__(user_input)  # expect: PK202
plugin = importlib.import_module("plugins." + user_input)  # expect: PK202
other = il.import_module(user_input)  # expect: PK202


def handler(config):
    return eval(config["expression"], {"__builtins__": {}})  # expect: B307


import logging.config

server = logging.config.listen(9999)  # expect: B612
