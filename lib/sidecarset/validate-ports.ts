/**
 * Container ports and probe ports, as Kubernetes' core validation checks them
 * (validateContainerPorts, ValidatePortNumOrName), with its messages.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
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

/** `ports` of one container: numbers in range, protocol known, names valid and unique within the container. */
export function validateContainerPorts(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const names = new Set<string>();
  forEachObjectAt(value, path, errs, (item, p) => {
    const name = stringAt(item.name, p.child('name'), errs);
    if (name !== undefined && name !== '') {
      // As in Kubernetes, an invalid name is not also reported as a duplicate.
      const msgs = portNameErrors(name);
      for (const msg of msgs) errs.push(p.child('name').invalid(name, msg));
      if (msgs.length === 0 && names.has(name)) errs.push(p.child('name').duplicate(name));
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

/**
 * AccumulateUniqueHostPorts: no two ports of `containers` (the app containers
 * together, or one init container alone) take the same host port, protocol
 * and host IP. `listPath` is where Kubernetes indexes them from: for an init
 * container, checked on its own, that index is always 0.
 */
export function validateHostPortConflicts(containers: readonly unknown[], listPath: FieldPath, errs: FieldError[]): void {
  const seen = new Set<string>();
  containers.forEach((c, ci) => {
    if (!isObject(c) || !Array.isArray(c.ports)) return;
    c.ports.forEach((port: unknown, pi: number) => {
      if (!isObject(port) || typeof port.hostPort !== 'number' || port.hostPort === 0) return;
      const protocol = typeof port.protocol === 'string' ? port.protocol : '';
      const hostIP = typeof port.hostIP === 'string' ? port.hostIP : '';
      const key = `${protocol}/${hostIP}/${port.hostPort}`;
      if (seen.has(key)) errs.push(listPath.index(ci).child('ports').index(pi).child('hostPort').duplicate(key));
      else seen.add(key);
    });
  });
}
