// strata: structured GPU data. The umbrella header: every layer, in order.
#pragma once

#include <strata/config.hpp>
#include <strata/reflect/reflect.hpp>
#include <strata/reflect/leaves.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/resource.hpp>
#include <strata/memory/soa_layout.hpp>
#include <strata/memory/scratch.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/container/aos_view.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/matrix.hpp>
#include <strata/iterator/record_iterator.hpp>
#include <strata/iterator/projection.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/convert/convert.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/rows.hpp>
#include <strata/algorithm/normalize.hpp>
