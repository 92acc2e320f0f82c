// Name formats from k8s.io/apimachinery/pkg/util/validation, with the same wording, so
// users see the messages they know from kubectl. Each check returns the problems (empty = ok).
// Dependency-free: the webhook's Worker bundle and the fake API server both use it.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
// Kubernetes' classic rule for env names (validation.IsEnvVarName).
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
const LABEL_VALUE_MAX = 63;

/** RFC 1123 label: container names. */
export function dns1123LabelProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) out.push(`must be no more than ${DNS1123_LABEL_MAX} characters`);
  if (!DNS1123_LABEL.test(value)) {
    out.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  }
  return out;
}

/** RFC 1123 subdomain: most object names, label key prefixes. */
export function dns1123SubdomainProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) out.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX} characters`);
  if (!DNS1123_SUBDOMAIN.test(value)) out.push(SUBDOMAIN_MSG);
  return out;
}

/** A label key: optional DNS-subdomain prefix, `/`, and a name of up to 63 characters. */
export function labelKeyProblems(key: string): string[] {
  const slash = key.lastIndexOf('/');
  const name = slash === -1 ? key : key.slice(slash + 1);
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const out: string[] = [];
  if (prefix !== undefined) {
    if (prefix.length === 0) out.push('prefix part must be non-empty');
    else for (const p of dns1123SubdomainProblems(prefix)) out.push(`prefix part ${p}`);
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else if (name.length > DNS1123_LABEL_MAX) out.push(`name part must be no more than ${DNS1123_LABEL_MAX} characters`);
  else if (!QUALIFIED_NAME_PART.test(name)) {
    out.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return out;
}

/** A label value: empty, or up to 63 alphanumerics with `-_.` inside. */
export function labelValueProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > LABEL_VALUE_MAX) out.push(`must be no more than ${LABEL_VALUE_MAX} characters`);
  if (!LABEL_VALUE.test(value)) {
    out.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return out;
}

/** An environment variable name (C identifier, plus `-` and `.`). */
export function envVarNameProblems(name: string): string[] {
  return ENV_VAR_NAME.test(name)
    ? []
    : ["a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"];
}
