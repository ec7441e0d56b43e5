"""Who signs in and with which roles: users, single sign-on, sign-in throttling."""
