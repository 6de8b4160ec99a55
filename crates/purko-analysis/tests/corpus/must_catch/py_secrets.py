"""Secrets by name and by shape."""


class Settings:
    password = "class_password"  # expect: B105


def login(user, password="Admin123"):  # expect: B107
    if password == "root":  # expect: B105
        return True
    return False


login("admin", password="hunter2")  # expect: B106
DB_PASSWORD = "s3cr3t-Pa55"  # expect: B105
api_key = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # expect: B105
settings = {"password": "12345"}  # expect: B105
settings["client_secret"] = "Zm9vYmFyYmF6cXV4"  # expect: B105
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"  # expect: PK101
GITHUB = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"  # expect: PK101
SLACK = "xoxb-123456789012-1234567890123-abcdefghijklmnop"  # expect: PK101
STRIPE = "sk_live_51Habcdefghijklmnopqrstuv"  # expect: PK101
GOOGLE = "AIzaSyA1234567890abcdefghijklmnopqrstuv"  # expect: PK101
OPENAI = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN"  # expect: PK101
DATABASE_URL = "postgresql://app:Tr0ub4dor@db.internal:5432/app"  # expect: PK101
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcN\n-----END RSA PRIVATE KEY-----"  # expect: PK101
not_a_secret = {"password": password_from_env}
prompt_password = "Password: "
