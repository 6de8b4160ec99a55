# Trojan source: the comment hides code from a reader.
access_level = "user"
if access_level != "none‮⁦":  # Check if admin⁩⁦  # expect: B613
    print("You are an admin.")
