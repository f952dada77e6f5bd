"""Single sign-on: OpenID Connect (authorization code flow with PKCE, mozilla-django-oidc) and a
trusted authenticating proxy's identity header; plus the switch that turns password sign-in off and
the audit rows of every sign-in (password, oidc, proxy)."""
