/**
 * The SidecarSet hash with OpenKruise 1.9's new container fields, against
 * vectors printed by a Go program that decodes the containers into
 * OpenKruise v1.9.0's apps/v1beta1 SidecarContainer and hashes them as its
 * encodeSidecarSetV1beta1 does (json.Marshal of the containers map, sha256,
 * SafeEncodeString). A set without the new fields hashes as under 1.8, so an
 * upgrade restarts nothing; a set with them hashes as Kruise 1.9 would.
 */
import { describe, expect, it } from "@jest/globals";
import { sidecarSetHash, sidecarSetHashDocument } from "../../lib/sidecarset/hash.ts";
import type { SidecarSet } from "../../lib/sidecarset/types.ts";

describe("hashes with the OpenKruise 1.9 fields", () => {
  it.each<[string, SidecarSet, string, string]>([
  [
    "a defaulted container without the 1.9 fields (the 1.8 vector: unchanged)",
    {"spec":{"containers":[{"name":"dns-f","image":"dns:1.0","imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","podInjectPolicy":"BeforeAppContainer","upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"}}]}},
    "{\"containers\":[{\"name\":\"dns-f\",\"image\":\"dns:1.0\",\"resources\":{},\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\",\"podInjectPolicy\":\"BeforeAppContainer\",\"upgradeStrategy\":{\"upgradeType\":\"ColdUpgrade\"},\"shareVolumePolicy\":{\"type\":\"disabled\"}}]}",
    "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684",
  ],
  [
    "shareVolumeDevicePolicy and a full resourcesPolicy",
    {"spec":{"containers":[{"name":"dns-f","image":"dns:1.0","imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","podInjectPolicy":"BeforeAppContainer","upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"},"shareVolumeDevicePolicy":{"type":"enabled"},"resourcesPolicy":{"targetContainersMode":"sum","targetContainersNameRegex":".*","resourcesExpr":{"limits":{"cpu":"cpu*50%","memory":"200Mi"},"requests":{"cpu":"cpu*50%","memory":"100Mi"}}}}]}},
    "{\"containers\":[{\"name\":\"dns-f\",\"image\":\"dns:1.0\",\"resources\":{},\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\",\"podInjectPolicy\":\"BeforeAppContainer\",\"upgradeStrategy\":{\"upgradeType\":\"ColdUpgrade\"},\"shareVolumePolicy\":{\"type\":\"disabled\"},\"shareVolumeDevicePolicy\":{\"type\":\"enabled\"},\"resourcesPolicy\":{\"targetContainersMode\":\"sum\",\"targetContainersNameRegex\":\".*\",\"resourcesExpr\":{\"limits\":{\"cpu\":\"cpu*50%\",\"memory\":\"200Mi\"},\"requests\":{\"cpu\":\"cpu*50%\",\"memory\":\"100Mi\"}}}}]}",
    "vfxw4z8db22x77dx48xw5xzbw8dfvv7d44467z48z6vzbcz24445zx22dx847xw5",
  ],
  [
    "empty policies: the pointer written, the mode always, empty expressions as {}",
    {"spec":{"containers":[{"name":"a","image":"a:1","shareVolumeDevicePolicy":{},"resourcesPolicy":{"resourcesExpr":{}}}]}},
    "{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\",\"resources\":{},\"upgradeStrategy\":{},\"shareVolumePolicy\":{},\"shareVolumeDevicePolicy\":{},\"resourcesPolicy\":{\"targetContainersMode\":\"\",\"resourcesExpr\":{}}}]}",
    "z84vvwxc265cxv8649756d4zvf92w4cffw4476d8xw64485zwff24zc484d2c5dx",
  ],
  [
    "a native init sidecar with a policy",
    {"spec":{"containers":[{"name":"a","image":"a:1"}],"initContainers":[{"name":"i","image":"i:1","restartPolicy":"Always","resourcesPolicy":{"targetContainersMode":"max","resourcesExpr":{"requests":{"memory":"memory"}}}}]}},
    "{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\",\"resources\":{},\"upgradeStrategy\":{},\"shareVolumePolicy\":{}}],\"initContainers\":[{\"name\":\"i\",\"image\":\"i:1\",\"resources\":{},\"restartPolicy\":\"Always\",\"upgradeStrategy\":{},\"shareVolumePolicy\":{},\"resourcesPolicy\":{\"targetContainersMode\":\"max\",\"resourcesExpr\":{\"requests\":{\"memory\":\"memory\"}}}}]}",
    "dc9vw6w4x9425w7vd5wzx649zcz75b5zf87c98w8x4w82v76b4627v74wfbdv6bx",
  ],
  ])("%s", (_name, set, document, hash) => {
    expect(sidecarSetHashDocument(set)).toBe(document);
    expect(sidecarSetHash(set)).toBe(hash);
  });
});
