// SPDX-License-Identifier: Apache-2.0
// strata: structured GPU data. The umbrella header: every layer, in order.
#pragma once

#include <strata/config.hpp>
#include <strata/version.hpp>
#include <strata/reflect/reflect.hpp>
#include <strata/reflect/leaves.hpp>
#include <strata/layout/descriptor.hpp>
#include <strata/layout/numeric.hpp>
#include <strata/layout/vector_access.hpp>
#include <strata/memory/error.hpp>
#include <strata/memory/device.hpp>
#include <strata/memory/resource.hpp>
#include <strata/layout/mapping.hpp>
#include <strata/layout/soa_mapping.hpp>
#include <strata/layout/aos_mapping.hpp>
#include <strata/memory/scratch.hpp>
#include <strata/container/view.hpp>
#include <strata/container/soa_view.hpp>
#include <strata/container/basic_vector.hpp>
#include <strata/container/soa_vector.hpp>
#include <strata/container/aosoa_vector.hpp>
#include <strata/container/aos_view.hpp>
#include <strata/container/aos_vector.hpp>
#include <strata/container/matrix.hpp>
#include <strata/iterator/record_iterator.hpp>
#include <strata/iterator/projection.hpp>
#include <strata/iterator/packet.hpp>
#include <strata/convert/convert.hpp>
#include <strata/convert/gather.hpp>
#include <strata/algorithm/transform.hpp>
#include <strata/algorithm/reduce.hpp>
#include <strata/algorithm/rows.hpp>
#include <strata/algorithm/normalize.hpp>
#include <strata/algorithm/compact.hpp>
#include <strata/algorithm/sort.hpp>
#include <strata/interop/mdspan.hpp>
