// Name formats from k8s.io/apimachinery/pkg/util/validation, with the server's messages.

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Problems with a DNS-1123 label (container names, namespace names); empty when valid. */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL.test(value)) {
    errs.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

/** Problems with a DNS-1123 subdomain (most object names); empty when valid. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!SUBDOMAIN.test(value)) {
    errs.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  return errs;
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5-character random suffix generateName gets (apiserver's names.SimpleNameGenerator). */
export function randomSuffix(random: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(random() * GENERATE_ALPHABET.length)];
  return s;
}
