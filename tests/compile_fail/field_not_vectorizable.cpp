// Must not compile: vector access demanded for a record with a 12-byte field.
#include <strata/layout/descriptor.hpp>
struct f3 { float x, y, z; };
struct rec {
  BOOST_HANA_DEFINE_STRUCT(rec, (f3, pos), (int, id));
};
int main() { return static_cast<int>(strata::layout::require_vectorizable_fields<rec>()); }
