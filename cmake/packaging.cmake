# The Debian 12 package: `cpack` in any build tree of this project makes
# produce-proxy_<version>-<release>_<arch>.deb (scripts/package.sh builds one
# from its own release tree; tests/ops/package_test.sh packages the release
# tree the test command already built, and installs it into a clean bookworm).
#
# What the package holds, beyond `cmake --install`'s binary, config and doc:
#   /usr/lib/systemd/system/produce-proxy.service  ExecStart=/usr/bin/produce-proxy
#   /etc/produce-proxy/produce-proxy.toml          the example config, a conffile
#   /usr/lib/sysusers.d/produce-proxy.conf          the produce-proxy system user
#   /usr/share/doc/produce-proxy/copyright, changelog.Debian.gz
#   /usr/share/lintian/overrides/produce-proxy      each override says why
# The unit a local `cmake --install` writes to /etc/systemd/system (component
# local_unit, systemd/CMakeLists.txt) stays out: a package's units belong in
# /usr/lib/systemd/system, where an operator's /etc copy or drop-in wins.
#
# cpack with the Ninja generator packages what is built and builds nothing:
# build the produce-proxy target first.
include(GNUInstallDirs)

set(PP_DEB_DIR ${CMAKE_BINARY_DIR}/packaging)
set(PP_DEB_RELEASE 1)
set(PP_DEB_MAINTAINER "produce-proxy maintainers <maintainers@users.noreply.a-seed-5d637244.example>")
set(PP_DEB_SUMMARY "Kafka produce sidecar for legacy clients")

# The unit as the package installs it: the tree's unit names the default
# prefix's binary (/usr/local/bin), the package's /usr/bin.
file(READ ${PROJECT_SOURCE_DIR}/systemd/produce-proxy.service pp_unit)
string(REPLACE "ExecStart=/usr/local/bin/produce-proxy" "ExecStart=/usr/bin/produce-proxy" pp_unit "${pp_unit}")
if(NOT pp_unit MATCHES "\nExecStart=/usr/bin/produce-proxy ")
  message(FATAL_ERROR "systemd/produce-proxy.service: no ExecStart=/usr/local/bin/produce-proxy to point at /usr/bin")
endif()
file(WRITE ${PP_DEB_DIR}/produce-proxy.service "${pp_unit}")
# Editing the unit re-runs this at the next build.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/systemd/produce-proxy.service)

# Maintainer scripts and control files, mode 0755 / 0644 as lintian wants.
file(CONFIGURE OUTPUT ${PP_DEB_DIR}/control/conffiles CONTENT "/etc/produce-proxy/produce-proxy.toml\n" @ONLY)
# The user exists before the service can start. systemd-sysusers reads the
# file just installed; without systemd (a container image) useradd makes the
# same user. The service is neither enabled nor started: the example config
# names a placeholder cluster, so the operator edits it first.
file(CONFIGURE OUTPUT ${PP_DEB_DIR}/control/postinst CONTENT [=[#!/bin/sh
set -e
if [ "$1" = configure ]; then
  if command -v systemd-sysusers >/dev/null 2>&1; then
    systemd-sysusers /usr/lib/sysusers.d/produce-proxy.conf
  elif ! getent passwd produce-proxy >/dev/null; then
    useradd --system --user-group --home-dir / --no-create-home \
      --shell /usr/sbin/nologin --comment "produce-proxy Kafka produce sidecar" produce-proxy
  fi
fi
exit 0
]=] @ONLY)
file(CHMOD ${PP_DEB_DIR}/control/postinst PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
     WORLD_READ WORLD_EXECUTE)

string(TIMESTAMP pp_copyright_years "%Y" UTC)
# Debian's doc files. The project has not declared a license yet, so the
# copyright file says exactly that rather than guess one.
file(CONFIGURE OUTPUT ${PP_DEB_DIR}/doc/copyright CONTENT "\
produce-proxy, packaged from its CMake project with CPack.

Copyright: ${pp_copyright_years} the produce-proxy authors
           ${PP_DEB_MAINTAINER}

License: none declared by the project yet; until one is, no rights beyond
those of the law are granted.
" @ONLY)
# The day of the build: a re-configure the same day leaves the file as it is.
string(TIMESTAMP pp_changelog_date "%a, %d %b %Y 00:00:00 +0000" UTC)
file(CONFIGURE OUTPUT ${PP_DEB_DIR}/changelog.Debian CONTENT "\
produce-proxy (${PROJECT_VERSION}-${PP_DEB_RELEASE}) unstable; urgency=medium

  * Built with CPack from the project's tree; its history is CHANGELOG.md.

 -- ${PP_DEB_MAINTAINER}  ${pp_changelog_date}
" @ONLY)
# gzip -9n: lintian wants maximal compression and no timestamp in the header.
execute_process(COMMAND gzip -9nfk ${PP_DEB_DIR}/changelog.Debian RESULT_VARIABLE pp_gzip_result)
if(NOT pp_gzip_result EQUAL 0)
  message(FATAL_ERROR "gzip -9n ${PP_DEB_DIR}/changelog.Debian failed")
endif()

file(CONFIGURE OUTPUT ${PP_DEB_DIR}/lintian-overrides CONTENT "\
# The reference is --help (grouped options and exit codes) and docs/ of the
# project; there is no man page to ship yet.
produce-proxy: no-manual-page [usr/bin/produce-proxy]
# Built for operators, not uploaded to Debian: there is no ITP bug to close.
produce-proxy: initial-upload-closes-no-bugs [usr/share/doc/produce-proxy/changelog.Debian.gz:1]
" @ONLY)

# Package-only files: component deb, left out of a plain `cmake --install`.
set(pp_deb_args COMPONENT deb EXCLUDE_FROM_ALL PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
install(FILES ${PP_DEB_DIR}/produce-proxy.service DESTINATION lib/systemd/system ${pp_deb_args})
install(FILES ${PROJECT_SOURCE_DIR}/systemd/produce-proxy.sysusers DESTINATION lib/sysusers.d
        RENAME produce-proxy.conf ${pp_deb_args})
install(FILES ${PP_DEB_DIR}/doc/copyright ${PP_DEB_DIR}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DOCDIR}
        ${pp_deb_args})
install(FILES ${PP_DEB_DIR}/lintian-overrides DESTINATION share/lintian/overrides RENAME produce-proxy ${pp_deb_args})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME produce-proxy)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${PP_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PP_DEB_SUMMARY}")
# Absolute destinations (/etc/produce-proxy) land in the package, not the host.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Everything a full install has except the local unit, plus the deb component,
# in one package. An install() rule given another COMPONENT stays out of the
# .deb until it is named here.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL Unspecified deb)
# The installed copy is stripped (lintian: unstripped-binary-or-object); the
# build tree keeps its symbols.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_NAME produce-proxy)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${PP_DEB_RELEASE})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PP_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The summary line comes from CPACK_PACKAGE_DESCRIPTION_SUMMARY.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "produce-proxy accepts Kafka Produce requests from clients that speak the old
Produce versions and message formats Kafka 4 removed, and produces their
records to a current cluster through one idempotent producer, in order and
exactly once, within a bounded memory budget. It runs next to its
application as a systemd service; edit /etc/produce-proxy/produce-proxy.toml,
then enable produce-proxy.service.")
# Depends from dpkg-shlibdeps: the Debian 12 packages of the libraries the
# binary links (librdkafka1, libuv1, libssl3, ...), with their minimum versions.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The unit's ExecReload= runs /bin/kill, which procps ships (a minimal
# Debian has none); the postinst needs systemd-sysusers or useradd (passwd).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "procps, systemd | passwd")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PP_DEB_DIR}/control/conffiles ${PP_DEB_DIR}/control/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
