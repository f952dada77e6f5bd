"""Claims of the test provider: a preferred_username and email, and a ``groups`` scope whose claim
lists the user's Django groups."""

from oidc_provider.lib.claims import ScopeClaims


def userinfo(claims, user):
    claims["preferred_username"] = user.username
    claims["email"] = user.email
    claims["email_verified"] = True
    claims["name"] = user.get_full_name() or user.username
    return claims


class GroupsScopeClaims(ScopeClaims):
    info_groups = ("Groups", "The groups you belong to.")

    def scope_groups(self):
        return {"groups": sorted(group.name for group in self.user.groups.all())}
