#pragma once
// Every pair style hayate knows, in one list: the input reads their parameters through
// style_info(), and the problem factory turns `pair.style` into a template argument with
// dispatch_style(). A new style is a struct like lj_cut.hpp plus one line in each function below.
#include "coulomb.hpp"
#include "lj_cut.hpp"
#include "morse.hpp"
#include "table.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::md {

// What input reading needs to know of a style, at run time.
struct StyleInfo {
  std::string name;
  bool charged = false;  // takes point charges (and, for coul/long, the k-space sum)
  bool tables = false;   // its pairs' forces come from tables (pair.coeffs: file or expression)
  std::vector<std::string> params;  // pair_coeff order
  std::vector<double> defaults;     // like-pair values when a type gives none (mixing styles)
  bool mixes = false;
  void (*mix)(const double*, const double*, Mixing, double*) = nullptr;
};

template <class Style>
StyleInfo style_info_of() {
  return StyleInfo{Style::name,
                   is_charged<Style>::value,
                   has_tables<Style>::value,
                   std::vector<std::string>(Style::params, Style::params + Style::nparams),
                   std::vector<double>(Style::defaults, Style::defaults + Style::nparams),
                   Style::mixes,
                   &Style::mix};
}

inline const std::vector<StyleInfo>& pair_styles() {
  static const std::vector<StyleInfo> styles{
      style_info_of<LjCut>(),    style_info_of<Morse>(),        style_info_of<CoulCut>(),
      style_info_of<CoulLong>(), style_info_of<LjCutCoulCut>(), style_info_of<LjCutCoulLong>(),
      style_info_of<Table>(),    style_info_of<TableCoulCut>(), style_info_of<TableCoulLong>()};
  return styles;
}

inline const StyleInfo& style_info(const std::string& name) {
  for (const auto& s : pair_styles())
    if (s.name == name) return s;
  throw std::invalid_argument("unknown pair style '" + name + "'");
}

// Calls f(Style{}) for the named style.
template <class F>
auto dispatch_style(const std::string& name, F&& f) {
  if (name == LjCut::name) return f(LjCut{});
  if (name == Morse::name) return f(Morse{});
  if (name == CoulCut::name) return f(CoulCut{});
  if (name == CoulLong::name) return f(CoulLong{});
  if (name == LjCutCoulCut::name) return f(LjCutCoulCut{});
  if (name == LjCutCoulLong::name) return f(LjCutCoulLong{});
  if (name == Table::name) return f(Table{});
  if (name == TableCoulCut::name) return f(TableCoulCut{});
  if (name == TableCoulLong::name) return f(TableCoulLong{});
  throw std::invalid_argument("unknown pair style '" + name + "'");
}

}  // namespace hayate::md
