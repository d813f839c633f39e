// SPDX-License-Identifier: Apache-2.0
// Must not compile: a plain struct without Hana reflection used as a record.
#include <strata/layout/descriptor.hpp>
struct plain { float x, y; };
int main() { return static_cast<int>(strata::reflect::check_record<plain>()); }
