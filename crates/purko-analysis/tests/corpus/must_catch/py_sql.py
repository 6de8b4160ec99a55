import sqlite3

from django.db.models.expressions import RawSQL

connection = sqlite3.connect("app.db")
cursor = connection.cursor()


def find(user_id, name, table):
    cursor.execute("SELECT * FROM users WHERE id = %s" % user_id)  # expect: B608
    cursor.execute("SELECT * FROM users WHERE name = '" + name + "'")  # expect: B608
    cursor.execute(f"DELETE FROM {table} WHERE id = {user_id}")  # expect: B608
    cursor.execute("UPDATE users SET name = '{}' WHERE id = 1".format(name))  # expect: B608
    query = "INSERT INTO log VALUES ('%s')" % name  # expect: B608
    cursor.execute("SELECT * FROM users WHERE id = ?", (user_id,))
    return query


def orm(queryset, value):
    queryset.extra(where=["name = '%s'" % value])  # expect: B610
    return RawSQL("select id from t where x = %s" % value, [])  # expect: B611 B608
