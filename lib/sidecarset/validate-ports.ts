/**
 * Container ports and probe ports, as Kubernetes' core validation checks them
 * (validateContainerPorts, ValidatePortNumOrName), with its messages.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { } from '../kube/json.ts';
import {integerAt, isUnset, optionalEnumAt, stringAt, forEachObjectAt } from './validate-shape.ts';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;

/** validation.IsValidPortNum. */
export function portNumberErrors(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];
}

/** validation.IsValidPortName: an IANA_SVC_NAME (RFC 6335). */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** An IntOrString port (probe handlers): a number in range or a valid port name. */
export function validatePortNumOrName(value: unknown, path: FieldPath, errs: FieldError[]): void {
  if (isUnset(value)) {
    errs.push(path.required());
  } else if (typeof value === 'number') {
    const msgs = Number.isInteger(value) ? portNumberErrors(value) : ['must be an integer'];
    for (const msg of msgs) errs.push(path.invalid(value, msg));
  } else if (typeof value === 'string') {
    for (const msg of portNameErrors(value)) errs.push(path.invalid(value, msg));
  } else {
    errs.push(path.invalid(value, 'must be an integer or a port name'));
  }
}

/** `ports` of one container: numbers in range, protocol known, names valid and unique within the container. */
export function validateContainerPorts(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const names = new Set<string>();
  forEachObjectAt(value, path, errs, (item, p) => {
    const name = stringAt(item.name, p.child('name'), errs);
    if (name !== undefined && name !== '') {
      for (const msg of portNameErrors(name)) errs.push(p.child('name').invalid(name, msg));
      if (names.has(name)) errs.push(p.child('name').duplicate(name));
      names.add(name);
    }
    const containerPort = integerAt(item.containerPort, p.child('containerPort'), errs);
    if (isUnset(item.containerPort) || containerPort === 0) {
      errs.push(p.child('containerPort').required());
    } else if (containerPort !== undefined) {
      for (const msg of portNumberErrors(containerPort)) errs.push(p.child('containerPort').invalid(containerPort, msg));
    }
    const hostPort = integerAt(item.hostPort, p.child('hostPort'), errs);
    if (hostPort !== undefined && hostPort !== 0) {
      for (const msg of portNumberErrors(hostPort)) errs.push(p.child('hostPort').invalid(hostPort, msg));
    }
    // The defaulting webhook sets TCP; left unset, the API server defaults it on the pod.
    optionalEnumAt(item.protocol, PROTOCOLS, p.child('protocol'), errs);
  });
}
