"""The graph store's REST API: one thin view per path; services write, selectors read. One module per
family of operations (``graphs/urls.py`` maps the paths): the graph itself (``lifecycle``), its
versions (``versions``), what KServe makes of a manifest (``releases``), manifests in and out as
files (``files``), its members and audit log (``sharing``) and personal API tokens (``tokens``)."""

from graphs.apis.files import GraphImportApi, GraphVersionExportApi
from graphs.apis.lifecycle import GraphDetailApi, GraphListCreateApi, GraphRestoreApi
from graphs.apis.releases import GraphVersionUpgradeReportApi, ValidateApi
from graphs.apis.sharing import GraphAuditListApi, GraphMemberDeleteApi, GraphMemberListCreateApi
from graphs.apis.tokens import ApiTokenDeleteApi, ApiTokenListCreateApi
from graphs.apis.versions import (
    GraphDiffApi,
    GraphVersionDetailApi,
    GraphVersionListCreateApi,
    GraphVersionRollbackApi,
)

__all__ = [
    "ApiTokenDeleteApi",
    "ApiTokenListCreateApi",
    "GraphAuditListApi",
    "GraphDetailApi",
    "GraphDiffApi",
    "GraphImportApi",
    "GraphListCreateApi",
    "GraphMemberDeleteApi",
    "GraphMemberListCreateApi",
    "GraphRestoreApi",
    "GraphVersionDetailApi",
    "GraphVersionExportApi",
    "GraphVersionListCreateApi",
    "GraphVersionRollbackApi",
    "GraphVersionUpgradeReportApi",
    "ValidateApi",
]
