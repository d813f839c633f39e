// SPDX-License-Identifier: Apache-2.0
// Particle data as the openPMD standard (1.1.0) lays it out in HDF5, so openPMD readers
// (openPMD-viewer, openPMD-api, the openPMD-validator's checks) open what strata writes. A species
// of one iteration is a container whose leaves the caller maps onto openPMD records: which leaves
// are `position`'s x, y and z, which is `weighting`, and each record's unit dimension and unitSI.
// The file holds
//   /                             openPMD, openPMDextension, basePath /data/%T/, iterationEncoding
//                                 groupBased, iterationFormat, particlesPath particles/, software,
//                                 softwareVersion, date (and author where given)
//   /data/<iteration>             time, dt, timeUnitSI
//   /data/<iteration>/particles/<species>/<record>/<component>   one dataset per mapped leaf
//                                 (<record> itself for a scalar record), with unitSI; each record
//                                 has unitDimension and timeOffset
// and, where the mapping gives none, a constant positionOffset of zero (the standard requires
// one). Leaves the mapping leaves out are not written. Datasets are written as strata::io::write
// writes leaves (chunked, checksummed, optionally deflated, through pinned staging for device
// containers), and a species appears only when all of it has been written.
#pragma once

#include <strata/io/hdf5.hpp>

#include <array>
#include <cstdint>
#include <ctime>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace strata::io {

/// One openPMD record of a species: its components, each a leaf of the record type by name
/// (`{"x", "pos.x"}`), or one component with an empty name for a scalar record (`{"", "w"}`).
struct openpmd_record {
  std::string name;
  std::vector<std::pair<std::string, std::string>> components;
  /// Powers of length, mass, time, electric current, temperature, amount of substance and
  /// luminous intensity (openPMD's unitDimension): {1, 0, 0, 0, 0, 0, 0} for a position.
  std::array<double, 7> unit_dimension{};
  /// The factor from the stored values to SI (every component of the record).
  double unit_si = 1.0;
};

/// The iteration a species belongs to.
struct openpmd_iteration {
  std::uint64_t index = 0;
  double time = 0.0;
  double dt = 1.0;
  double time_unit_si = 1.0;
};

struct openpmd_options : write_options {
  std::string author;  ///< the root's `author` attribute, where given
};

namespace h5 {
/// A fixed-length ASCII string attribute (the openPMD validator reads its strings as bytes).
inline void write_fixed_string_attribute(hid_t obj, const char* name, const std::string& value) {
  id type = check(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1)), "string type size");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "string type padding");
  id space = check(H5Screate(H5S_SCALAR), H5Sclose, "scalar dataspace");
  id attr = check(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  std::string padded = value;
  padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
  check(H5Awrite(attr.get(), type.get(), padded.data()), std::string("attribute ") + name);
}
/// A scalar or 1-D attribute of n values of `mem` (stored as `file_type`).
inline void write_numeric_attribute(hid_t obj, const char* name, hid_t file_type, hid_t mem, const void* values, hsize_t n) {
  id space = n == 0 ? check(H5Screate(H5S_SCALAR), H5Sclose, "dataspace") : check(H5Screate_simple(1, &n, nullptr), H5Sclose, "dataspace");
  id attr = check(H5Acreate2(obj, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, std::string("attribute ") + name);
  check(H5Awrite(attr.get(), mem, values), std::string("attribute ") + name);
}
}  // namespace h5

namespace detail {
inline std::string openpmd_date() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S +0000", &utc);
  return buf;
}
inline void write_record_attributes(hid_t record, const openpmd_record& r) {
  h5::write_numeric_attribute(record, "unitDimension", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r.unit_dimension.data(), 7);
  const float time_offset = 0.0f;
  h5::write_numeric_attribute(record, "timeOffset", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, &time_offset, 0);
}
inline void write_unit_si(hid_t component, double unit_si) {
  h5::write_numeric_attribute(component, "unitSI", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &unit_si, 0);
}
}  // namespace detail

/// Writes `c` as species `species` of iteration `it` of an openPMD file (see the top of this
/// header), its leaves mapped onto `records`. A record names leaves of T by their strata names
/// (`pos.x`, `w[2]`); a leaf named twice, a leaf T lacks, a missing `position` record, or a species
/// already in the iteration (without overwrite) is refused before anything is written.
template <class T, class M, memory_space S>
void write_openpmd(const file& f, const openpmd_iteration& it, const std::string& species, const basic_vector<T, M, S>& c,
                   const std::vector<openpmd_record>& records, const openpmd_options& o = {}) {
  const std::string what = "strata::io::write_openpmd: ";
  if (species.empty() || species.find('/') != std::string::npos || species.find('.') != std::string::npos)
    throw std::invalid_argument(what + "species name '" + species + "' must be non-empty, without '/' or '.'");
  std::array<std::string, reflect::leaf_count<T>> names;
  std::set<std::string> record_names;
  bool has_position = false, has_offset = false;
  std::vector<std::string> position_components;
  for (const openpmd_record& r : records) {
    if (r.name.empty() || r.name.find('/') != std::string::npos || !record_names.insert(r.name).second)
      throw std::invalid_argument(what + "record name '" + r.name + "' is empty, holds '/' or is given twice");
    if (r.components.empty()) throw std::invalid_argument(what + "record '" + r.name + "' has no components");
    const bool scalar = r.components.size() == 1 && r.components[0].first.empty();
    std::set<std::string> component_names;
    for (const auto& [component, leaf] : r.components) {
      if (!scalar && (component.empty() || component.find('/') != std::string::npos || !component_names.insert(component).second))
        throw std::invalid_argument(what + "record '" + r.name + "' has a component named '" + component + "' (empty, with '/' or given twice)");
      std::size_t index = reflect::leaf_count<T>;
      for (std::size_t l = 0; l < reflect::leaf_count<T>; ++l)
        if (reflect::leaf_names<T>[l] == leaf) index = l;
      if (index == reflect::leaf_count<T>) {
        std::string all;
        for (std::string_view n : reflect::leaf_names<T>) all += (all.empty() ? "" : ", ") + std::string(n);
        throw std::invalid_argument(what + "record '" + r.name + "' names leaf '" + leaf + "', which " + strata::detail::type_name<T>() +
                                    " lacks; its leaves: " + all);
      }
      if (!names[index].empty()) throw std::invalid_argument(what + "leaf '" + leaf + "' is mapped twice ('" + names[index] + "' and record '" + r.name + "')");
      names[index] = scalar ? r.name : r.name + "/" + component;
      if (r.name == "position") position_components.push_back(component);
    }
    has_position = has_position || r.name == "position";
    has_offset = has_offset || r.name == "positionOffset";
  }
  if (!has_position) throw std::invalid_argument(what + "the records name no 'position' (openPMD requires it for every species)");

  h5::quiet q;
  h5::id root = h5::check(H5Gopen2(f.id(), "/", H5P_DEFAULT), H5Gclose, "the root group of '" + f.path() + "'");
  if (!h5::has_attribute(root.get(), "openPMD")) {
    h5::write_fixed_string_attribute(root.get(), "openPMD", "1.1.0");
    const std::uint32_t extension = 0;
    h5::write_numeric_attribute(root.get(), "openPMDextension", H5T_STD_U32LE, H5T_NATIVE_UINT32, &extension, 0);
    h5::write_fixed_string_attribute(root.get(), "basePath", "/data/%T/");
    h5::write_fixed_string_attribute(root.get(), "iterationEncoding", "groupBased");
    h5::write_fixed_string_attribute(root.get(), "iterationFormat", "/data/%T/");
    h5::write_fixed_string_attribute(root.get(), "particlesPath", "particles/");
    h5::write_fixed_string_attribute(root.get(), "software", "strata");
    h5::write_fixed_string_attribute(root.get(), "softwareVersion", STRATA_VERSION_STRING);
    h5::write_fixed_string_attribute(root.get(), "date", detail::openpmd_date());
    if (!o.author.empty()) h5::write_fixed_string_attribute(root.get(), "author", o.author);
  } else if (h5::read_string_attribute(root.get(), "basePath") != "/data/%T/" ||
             h5::read_string_attribute(root.get(), "iterationEncoding") != "groupBased") {
    throw file_error(what + "'" + f.path() + "' is an openPMD file of another layout (strata writes basePath /data/%T/, groupBased)");
  }
  const std::string iteration = "data/" + std::to_string(it.index);
  if (!h5::exists(f.id(), iteration)) {
    h5::id lcpl = h5::check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "link property list");
    h5::check(H5Pset_create_intermediate_group(lcpl.get(), 1), "link property list");
    h5::id g = h5::check(H5Gcreate2(f.id(), iteration.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "cannot create '" + iteration + "'");
    h5::write_numeric_attribute(g.get(), "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &it.time, 0);
    h5::write_numeric_attribute(g.get(), "dt", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &it.dt, 0);
    h5::write_numeric_attribute(g.get(), "timeUnitSI", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &it.time_unit_si, 0);
  }
  const std::string path = iteration + "/particles/" + species;
  detail::write_group(f, path, c, o, names, [&](hid_t g, auto& dsets) {
    for (const openpmd_record& r : records) {
      const bool scalar = r.components.size() == 1 && r.components[0].first.empty();
      h5::id obj = scalar ? h5::check(H5Dopen2(g, r.name.c_str(), H5P_DEFAULT), H5Dclose, "record '" + r.name + "'")
                          : h5::check(H5Gopen2(g, r.name.c_str(), H5P_DEFAULT), H5Gclose, "record '" + r.name + "'");
      detail::write_record_attributes(obj.get(), r);
      if (scalar) {
        detail::write_unit_si(obj.get(), r.unit_si);
      } else {
        for (const auto& [component, leaf] : r.components) {
          h5::id d = h5::check(H5Dopen2(obj.get(), component.c_str(), H5P_DEFAULT), H5Dclose, "component '" + component + "'");
          detail::write_unit_si(d.get(), r.unit_si);
        }
      }
    }
    (void)dsets;
    if (!has_offset) {  // a constant record component: a group with value and shape
      openpmd_record offset{"positionOffset", {}, {1, 0, 0, 0, 0, 0, 0}, 1.0};
      h5::id rec = h5::check(H5Gcreate2(g, "positionOffset", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "positionOffset");
      detail::write_record_attributes(rec.get(), offset);
      const double zero = 0.0;
      const std::uint64_t shape = c.size();
      for (const std::string& component : position_components) {
        h5::id comp = h5::check(H5Gcreate2(rec.get(), component.empty() ? "x" : component.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                                "positionOffset component");
        h5::write_numeric_attribute(comp.get(), "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &zero, 0);
        h5::write_numeric_attribute(comp.get(), "shape", H5T_STD_U64LE, H5T_NATIVE_UINT64, &shape, 1);
        detail::write_unit_si(comp.get(), 1.0);
      }
    }
    h5::write_u64_attribute(g, "strata.records", c.size());
    h5::write_string_attribute(g, "strata.record", strata::detail::type_name<T>());
  });
}

}  // namespace strata::io
