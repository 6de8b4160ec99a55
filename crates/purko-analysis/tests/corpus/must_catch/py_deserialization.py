import marshal
import pickle  # expect: B403
import shelve  # expect: B403

import dill  # expect: B403
import jsonpickle
import numpy as np
import pandas as pd
import torch
import yaml
from yaml import load as yaml_load

blob = open("data.bin", "rb").read()
obj = pickle.loads(blob)  # expect: B301
with open("data.pkl", "rb") as handle:
    obj = pickle.load(handle)  # expect: B301
    unpickler = pickle.Unpickler(handle)  # expect: B301
code = marshal.loads(blob)  # expect: B302
db = shelve.open("state.db")  # expect: B301
thing = dill.loads(blob)  # expect: B301
decoded = jsonpickle.decode(blob)  # expect: B301
frame = pd.read_pickle("frame.pkl")  # expect: B301
config = yaml.load(open("config.yml"))  # expect: B506
config = yaml_load(blob)  # expect: B506
config = yaml.unsafe_load(blob)  # expect: B506
safe = yaml.load(blob, Loader=yaml.SafeLoader)
model = torch.load("model.pt")  # expect: B614
arrays = np.load("arrays.npy", allow_pickle=True)  # expect: PK203
