# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who may read a file: the TLS preflight's judgement of readability for the user the SBC runs as.

Judged from mode bits, owner, group and that user's groups, including every parent directory (the files
are read as root, which proves nothing about the SBC's user). POSIX ACLs are not evaluated; a file
carrying one gets a warning. Standard library only: runs on the SBC host.
"""

from __future__ import annotations

import dataclasses
import grp
import os
import pwd
import stat
import typing as t

# The preflight's option names, which its messages name.
CERTIFICATE = "certificate"
PRIVATE_KEY = "private_key"
CA_BUNDLE = "ca_bundle"
CHAIN_CA = "chain_ca"


@dataclasses.dataclass
class PreflightResult:
    """What the preflight found; ``as_dict`` is what the module returns."""

    errors: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    certificate: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    checked: dict[str, t.Any] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, t.Any]:
        return {"ok": self.ok, "errors": list(self.errors), "warnings": list(self.warnings),
                "certificate": dict(self.certificate), "checked": dict(self.checked)}


@dataclasses.dataclass(frozen=True)
class RunAsUser:
    """The account whose access is judged: its uid and every group it is in."""

    name: str
    uid: int
    gid: int
    groups: frozenset[int]

    def group_names(self) -> list[str]:
        return sorted(_group_name(gid) for gid in self.groups)


def lookup_user(name: str) -> RunAsUser:
    """Raises KeyError for an unknown user."""
    entry = pwd.getpwnam(name)
    groups = {entry.pw_gid}
    groups.update(group.gr_gid for group in grp.getgrall() if name in group.gr_mem)
    return RunAsUser(name=name, uid=entry.pw_uid, gid=entry.pw_gid, groups=frozenset(groups))


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def permits(info: os.stat_result, user: RunAsUser, bit: int) -> bool:
    """Whether the mode bits grant ``bit`` (4 = r, 1 = x) to ``user``: owner, else group, else other."""
    if user.uid == 0:
        return True  # root reads and searches regardless of mode (CAP_DAC_OVERRIDE)
    if info.st_uid == user.uid:
        return bool(info.st_mode & (bit << 6))
    if info.st_gid in user.groups:
        return bool(info.st_mode & (bit << 3))
    return bool(info.st_mode & bit)


def _describe_mode(info: os.stat_result) -> str:
    return "mode %04o, owner %s, group %s" % (stat.S_IMODE(info.st_mode), _user_name(info.st_uid),
                                              _group_name(info.st_gid))


def _ancestors(path: str) -> list[str]:
    """Every directory above ``path``, from / down."""
    found = []
    parent = os.path.dirname(path)
    while True:
        found.append(parent)
        upper = os.path.dirname(parent)
        if upper == parent:
            break
        parent = upper
    return list(reversed(found))


def _directories_to_search(path: str) -> list[str]:
    """Directories the kernel walks to open ``path``: those of the path as given and, past a symlink, of its target."""
    seen: set[tuple[int, int]] = set()
    walk = []
    for directory in _ancestors(os.path.abspath(path)) + _ancestors(os.path.realpath(path)):
        try:
            info = os.stat(directory)
        except OSError:
            continue  # the file check reports a missing path
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            walk.append(directory)
    return walk


def _has_acl(path: str) -> bool:
    try:
        os.getxattr(path, "system.posix_acl_access")
    except (OSError, AttributeError):
        return False
    return True


def file_label(option: str, path: str) -> str:
    """'private_key /etc/x.key' or, for a symlink, 'private_key /etc/x.key (a symlink to /srv/y.key)'."""
    if os.path.islink(path):
        return "%s %s (a symlink to %s)" % (option, path, os.path.realpath(path))
    return "%s %s" % (option, path)


_PERMISSION_ADVICE = {
    PRIVATE_KEY: "chown root:{group} {path} && chmod 0640 {path}",
    CERTIFICATE: "chmod 0644 {path}",
    CA_BUNDLE: "chmod 0644 {path}",
    CHAIN_CA: "chmod 0644 {path}",
}


def check_file_access(option: str, path: str, user: t.Optional[RunAsUser],
                      result: PreflightResult) -> bool:
    """Exists, is a regular file and (when ``user`` is known) readable by it. Records and reports; True if usable."""
    label = file_label(option, path)
    record: dict[str, t.Any] = {"path": path, "resolved": os.path.realpath(path), "symlink": os.path.islink(path)}
    result.checked.setdefault("files", {})[option] = record
    try:
        info = os.stat(path)
    except FileNotFoundError:
        result.errors.append("%s does not exist%s; expected a PEM file at this path" % (
            label, " (dangling symlink)" if os.path.islink(path) else ""))
        return False
    except OSError as exc:
        result.errors.append("%s cannot be examined: %s; expected a readable PEM file" % (label, exc.strerror))
        return False
    record.update(mode="%04o" % stat.S_IMODE(info.st_mode), owner=_user_name(info.st_uid),
                  group=_group_name(info.st_gid))
    if not stat.S_ISREG(info.st_mode):
        result.errors.append("%s is not a regular file (%s); expected a PEM file" % (
            label, "a directory" if stat.S_ISDIR(info.st_mode) else "a special file"))
        return False
    if user is None:
        return True  # the unknown user is reported once, by the caller
    if _has_acl(path):
        result.warnings.append("%s has a POSIX ACL; readability for %s was judged from the mode bits only"
                               % (label, user.name))
    for directory in _directories_to_search(path):
        dir_info = os.stat(directory)
        if not permits(dir_info, user, 1):
            record["readable_by_run_as_user"] = False
            result.errors.append(
                "%s: user %s cannot reach it: directory %s (%s) is not searchable (x) by %s; expected x for %s on"
                " every parent directory, e.g. chown root:%s %s && chmod 0750 %s"
                % (label, user.name, directory, _describe_mode(dir_info), user.name, user.name,
                   _group_name(user.gid), directory, directory))
            return True  # root can still read it: the content checks go on
    readable = permits(info, user, 4)
    record["readable_by_run_as_user"] = readable
    if not readable:
        advice = _PERMISSION_ADVICE[option].format(group=_group_name(user.gid), path=path)
        result.errors.append("%s: user %s (groups %s) cannot read it (%s); expected read access for %s, e.g. %s"
                             % (label, user.name, ", ".join(user.group_names()), _describe_mode(info), user.name,
                                advice))
    return True


def check_key_mode(path: str, user: t.Optional[RunAsUser], result: PreflightResult) -> None:
    """A private key must not grant anything to other users."""
    info = os.stat(path)
    if stat.S_IMODE(info.st_mode) & 0o007:
        group = _group_name(user.gid) if user else "<the SBC's group>"
        result.errors.append(
            "%s is accessible to every user on the host (%s); expected no access for others, e.g."
            " chown root:%s %s && chmod 0640 %s"
            % (file_label(PRIVATE_KEY, path), _describe_mode(info), group, path, path))


def group_members(gid: int) -> set[str]:
    """Every account in group ``gid``: its listed members and the accounts whose primary group it is."""
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        members = set()
    return members | {entry.pw_name for entry in pwd.getpwall() if entry.pw_gid == gid}


def check_key_group(path: str, user: t.Optional[RunAsUser], result: PreflightResult,
                    leaving: t.Iterable[str] = ()) -> None:
    """Issue 21: a key its group may read is read by every member of that group; only the SBC's user may be one
    (an SRV refresher was once put in the SBC's group and so could read the key). ``leaving``: accounts the
    same run takes out of the group before the SBC restarts (a role's own helper accounts)."""
    info = os.stat(path)
    if user is None or not stat.S_IMODE(info.st_mode) & 0o040:
        return
    others = sorted(group_members(info.st_gid) - {user.name} - set(leaving))
    if others:
        result.errors.append(
            "%s is readable by group %s, whose members include %s besides %s; expected the SBC's user alone in"
            " the key's group, e.g. gpasswd -d %s %s" % (file_label(PRIVATE_KEY, path), _group_name(info.st_gid),
                                                         ", ".join(others), user.name, others[0],
                                                         _group_name(info.st_gid)))
