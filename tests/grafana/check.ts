// The shape Grafana 10.4 gives a dashboard, from its own generated schema
// types (@grafana/schema, made from Grafana's CUE kinds). tests/grafana_dashboard.rs
// appends `const dashboard: CheckedDashboard = <the shipped JSON>;`, and each
// field override as `const …: OverrideOf['table'] = <its properties as a field
// config>;` (the schema types an override's values as unknown), and runs tsc:
// an unknown key, a value of the wrong type or a misspelt enum value anywhere
// the schema describes is a compile error naming its place.
import type { Dashboard, FieldConfig, Panel } from '@grafana/schema';
import type { PrometheusDataQuery } from '@grafana/schema/dist/esm/raw/composable/prometheus/dataquery/x/PrometheusDataQuery_types.gen';
import type {
  Options as StatOptions,
} from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type {
  FieldConfig as TableFieldConfig,
  Options as TableOptions,
} from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type {
  FieldConfig as TimeSeriesFieldConfig,
  Options as TimeSeriesOptions,
} from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

// JSON as Grafana reads it: an enum is its string values; every key may be
// left to Grafana's default (the schema marks defaulted keys required).
type Shape<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer U>
      ? Shape<U>[]
      : T extends object
        ? { [K in keyof T]?: Shape<T[K]> }
        : T;

type PanelOf<Type extends string, Options, Custom> = Shape<
  Omit<Panel<unknown, Custom>, 'type' | 'options' | 'targets'>
> & {
  type: Type;
  options?: Shape<Options>;
  targets?: Shape<PrometheusDataQuery>[];
};

type CheckedPanel =
  | PanelOf<'table', TableOptions, TableFieldConfig>
  | PanelOf<'timeseries', TimeSeriesOptions, TimeSeriesFieldConfig>
  | PanelOf<'stat', StatOptions, Record<string, never>>;

export type CheckedDashboard = Shape<Omit<Dashboard, 'panels'>> & {
  panels?: CheckedPanel[];
};

// What a field override of each panel type may set: its properties' ids are
// paths into the same field config as the panel's defaults.
export type OverrideOf = {
  table: Shape<FieldConfig<TableFieldConfig>>;
  timeseries: Shape<FieldConfig<TimeSeriesFieldConfig>>;
  stat: Shape<FieldConfig<Record<string, never>>>;
};
