import ctypes

libc = ctypes.CDLL("libc.so.6")  # expect: PK301
ctypes.memmove(dst, src, 16)  # expect: PK301
raw = ctypes.string_at(0x1000, 8)  # expect: PK301
