// SPDX-License-Identifier: Apache-2.0
// strata's release version, written in this one place: CMake's project(VERSION) and the Python
// package's version (scikit-build-core's regex provider) are read from the defines below.
#pragma once

#define STRATA_VERSION_MAJOR 1
#define STRATA_VERSION_MINOR 0
#define STRATA_VERSION_PATCH 0
#define STRATA_VERSION_STRING "1.0.0"

namespace strata {

/// The release of the headers a program is compiled with, as semantic versioning counts it
/// (docs/stability.md): `strata::version::major`, `strata::version::string`.
struct version {
  static constexpr int major = STRATA_VERSION_MAJOR;
  static constexpr int minor = STRATA_VERSION_MINOR;
  static constexpr int patch = STRATA_VERSION_PATCH;
  static constexpr const char* string = STRATA_VERSION_STRING;
};

namespace detail {
// "MAJOR.MINOR.PATCH" spelled from the numbers, so the string define cannot drift from them.
constexpr bool version_string_matches(const char* s, int major, int minor, int patch) {
  const int parts[3] = {major, minor, patch};
  for (int i = 0; i < 3; ++i) {
    if (*s < '0' || *s > '9') return false;
    int value = 0;
    while (*s >= '0' && *s <= '9') value = value * 10 + (*s++ - '0');
    if (value != parts[i] || *s != (i < 2 ? '.' : '\0')) return false;
    if (i < 2) ++s;
  }
  return true;
}
}  // namespace detail

static_assert(detail::version_string_matches(STRATA_VERSION_STRING, STRATA_VERSION_MAJOR, STRATA_VERSION_MINOR,
                                             STRATA_VERSION_PATCH),
              "STRATA_VERSION_STRING must read MAJOR.MINOR.PATCH of the three STRATA_VERSION_* defines");

}  // namespace strata
