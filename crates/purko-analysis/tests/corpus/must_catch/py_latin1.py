# -*- coding: latin-1 -*-
# Café : a Latin-1 file with a PEP 263 declaration.
nom = "résumé"
result = eval(nom)  # expect: B307
