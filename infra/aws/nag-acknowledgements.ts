/**
 * The cdk-nag AWS Solutions findings this stack keeps, each acknowledged
 * with its reason (test/infra/nag.test.ts fails on any other finding, with
 * the public and the private ingress). Acknowledged by resource type over
 * the whole stack: every resource of that type here has the same reason.
 */
import { Validations, type Stack } from 'aws-cdk-lib';
import { CfnMethod, CfnRestApi, CfnStage } from 'aws-cdk-lib/aws-apigateway';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { CfnSecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IConstruct } from 'constructs';

interface Acknowledgement {
  id: string;
  reason: string;
}

const BY_TYPE: readonly { is: (c: IConstruct) => boolean; acknowledgements: readonly Acknowledgement[] }[] = [
  {
    is: (c) => c instanceof CfnSecret,
    acknowledgements: [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'The webhook secret is rotated by status-sync itself (lib/auth/rotation.ts: new secret stored beside the old, webhooks repointed, old dropped), ' +
          'which Secrets Manager rotation cannot do; the kubeconfig secrets hold the user\'s cluster credentials, rotated where they are issued.',
      },
    ],
  },
  {
    is: (c) => c instanceof CfnFunction,
    acknowledgements: [
      {
        id: 'AwsSolutions-L1',
        reason: 'The functions are built and tested on Node.js 22 (package.json engines, the project\'s own node binary); the runtime moves with the project, not ahead of its tests.',
      },
    ],
  },
  {
    is: (c) => c instanceof CfnRestApi,
    acknowledgements: [
      { id: 'AwsSolutions-APIG2', reason: 'Each function validates the AdmissionReview or ConversionReview itself, with errors the API server shows; a gateway model would answer in another shape.' },
    ],
  },
  {
    is: (c) => c instanceof CfnStage,
    acknowledgements: [
      {
        id: 'AwsSolutions-APIG1',
        reason: 'Access logs would record every request path, which carries the caller secret; the functions log each review themselves without it (docs/OPERATIONS.md).',
      },
      { id: 'AwsSolutions-APIG6', reason: 'Execution logs would record the path with the caller secret; the functions log each review themselves without it.' },
      {
        id: 'AwsSolutions-APIG3',
        reason: 'A private API reached only through the VPC endpoint, whose security group admits the EKS control plane alone; WAF rules would add nothing but cost and latency on the pod-creation path.',
      },
    ],
  },
  {
    is: (c) => c instanceof CfnMethod,
    acknowledgements: [
      {
        id: 'AwsSolutions-APIG4',
        reason: 'The caller is the Kubernetes API server, which cannot sign requests or present Cognito tokens; each function authenticates it by the secret path (wire.md), behind the endpoint-only resource policy.',
      },
      { id: 'AwsSolutions-COG4', reason: 'The caller is the Kubernetes API server, not a user: no user pool applies; the functions authenticate it by the secret path.' },
    ],
  },
];

/** Acknowledges the findings above on every resource of the stack they apply to. */
export function acknowledgeNagFindings(stack: Stack): void {
  for (const construct of stack.node.findAll()) {
    for (const { is, acknowledgements } of BY_TYPE) {
      if (!is(construct)) continue;
      for (const acknowledgement of acknowledgements) Validations.of(construct).acknowledge(acknowledgement);
    }
  }
}
