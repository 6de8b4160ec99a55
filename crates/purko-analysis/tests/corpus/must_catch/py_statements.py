def check(user):
    assert user.is_admin  # expect: B101
    try:
        user.save()
    except:  # expect: PK110 B110
        pass
    try:
        user.delete()
    except Exception:  # expect: B110
        pass
    for item in user.items:
        try:
            item.refresh()
        except Exception:  # expect: B112
            continue
    try:
        user.reload()
    except:  # expect: PK110
        raise
